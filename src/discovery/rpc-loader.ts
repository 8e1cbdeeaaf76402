/**
 * The RPC client, loaded the first time discovery has a listener to ask: the
 * Connect stack it stands on is most of a CLI process's start-up (issue #36),
 * and `sessions --help`, a scan that finds no agy, or a caller that brings
 * its own `createClient` never needs it.
 */
import type { AgyRpcClient, AgyRpcClientOptions } from "../rpc/client.js";

export type CreateClient = (options: AgyRpcClientOptions) => AgyRpcClient;

/** `given`, or the library's own client factory once it has been loaded. */
export async function clientFactory(given: CreateClient | undefined): Promise<CreateClient> {
  if (given !== undefined) return given;
  return (await import("../rpc/client.js")).createAgyRpcClient;
}
