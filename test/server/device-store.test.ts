/**
 * The paired-device file: hashes only, mode 0600, revocations seen by
 * another store on the same file (the CLI's, while serve runs).
 */
import { mkdtemp, readFile, rm, stat, chmod, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceStore, deviceFileFor } from "../../src/server/device-store.js";

let dir: string | undefined;
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

async function tempFile(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "agyb-devices-"));
  return deviceFileFor(join(dir, "agy-bridge", "token"));
}

describe("the device store", () => {
  it("authenticates a new device's token and writes only its hash, mode 0600", async () => {
    const file = await tempFile();
    const store = createDeviceStore({ file, now: () => new Date("2026-12-01T08:00:00Z") });
    const { device, token } = await store.add("Pixel 9");
    expect(device).toEqual({ id: expect.stringMatching(/^[0-9a-f]{12}$/), name: "Pixel 9", pairedAt: "2026-12-01T08:00:00.000Z" });
    expect(await store.authenticate(token)).toEqual(device);
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split(".")[2]);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await store.list()).toEqual([device]);
  });

  it("refuses a token with the right id and a wrong secret, and tokens of no device", async () => {
    const store = createDeviceStore({ file: await tempFile() });
    const { device, token } = await store.add("phone");
    const forged = `agyd.${device.id}.${"A".repeat(43)}`;
    expect(await store.authenticate(forged)).toBeUndefined();
    expect(await store.authenticate(token.slice(0, -1))).toBeUndefined();
    expect(await store.authenticate("agyd.000000000000." + token.split(".")[2])).toBeUndefined();
    expect(await store.authenticate("")).toBeUndefined();
  });

  it("stops authenticating a device another store on the same file revoked", async () => {
    const file = await tempFile();
    const serve = createDeviceStore({ file });
    const cli = createDeviceStore({ file });
    const kept = await serve.add("tablet");
    const gone = await serve.add("old phone");
    expect(await serve.authenticate(gone.token)).toEqual(gone.device);
    expect(await cli.revoke(gone.device.id)).toBe(true);
    expect(await serve.authenticate(gone.token)).toBeUndefined();
    expect(await serve.authenticate(kept.token)).toEqual(kept.device);
    expect(await cli.revoke(gone.device.id)).toBe(false);
    expect((await serve.list()).map((d) => d.name)).toEqual(["tablet"]);
  });

  it("names a device by its id when no usable name is given, and strips control characters", async () => {
    const store = createDeviceStore({ file: await tempFile() });
    const unnamed = await store.add(undefined);
    expect(unnamed.device.name).toBe(`device ${unnamed.device.id}`);
    const odd = await store.add("bad\u001b[31m\nname");
    expect(odd.device.name).toBe("bad 31m name");
  });

  it("refuses a device file other users can read, saying how to fix it", async () => {
    const file = await tempFile();
    const store = createDeviceStore({ file });
    await store.add("phone");
    await chmod(file, 0o644);
    await expect(createDeviceStore({ file }).list()).rejects.toThrow(/can be read by other users.*chmod 600/);
  });

  it("says what to do with a device file that is not JSON", async () => {
    const file = await tempFile();
    await createDeviceStore({ file }).add("phone");
    await writeFile(file, "{nope", { mode: 0o600 });
    await expect(createDeviceStore({ file }).list()).rejects.toThrow(/is not JSON; delete it/);
  });
});
