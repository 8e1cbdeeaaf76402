/**
 * The fleet relay: agy sessions of many hosts on Redis Streams (docs/fleet.md).
 */
export { createRelay, type FleetSession, type Relay, type RelayAnswer, type RelayOptions } from "./relay.js";
export { createCommandRunner, type CommandResult, type CommandRunner, type CommandRunnerOptions } from "./command-runner.js";
export { parseCommand, fieldMap, type CommandType, type FleetCommand, type ParsedCommand } from "./fleet-command.js";
export { startPublisher, stateOf, type FleetState, type Publisher, type PublisherOptions } from "./conversation-publisher.js";
export { createKeyer, eventKey, type Keyer } from "./event-key.js";
export { COMMAND_GROUP, HOST_NAME, SESSIONS_STREAM, commandsStream, cursorsKey, eventsStream, requestKey, resultsStream } from "./stream-names.js";
export {
  createFleetClient,
  type FleetClient,
  type FleetClientOptions,
  type FleetCommandOutcome,
  type FleetCommandRequest,
  type FleetIndexEntry,
  type PublishedEvent,
} from "./fleet-client.js";
export { createFleetSessionSource, type FleetOffer, type FleetSessionSource, type FleetSessionSourceOptions } from "./fleet-session-source.js";
export {
  createRemoteSession,
  type RemoteAction,
  type RemoteAnswerResult,
  type RemoteInterruptResult,
  type RemoteSession,
  type RemoteSessionOptions,
  type RemoteTurnResult,
} from "./remote-session.js";
