/** Every campaign, with the input count CI runs on each push (a few seconds each). */
import type { Campaign } from "../runner.js";
import { cliArgsCampaign } from "./cli-args.js";
import { envelopeCampaign } from "./envelope.js";
import { responseDecodersCampaign } from "./response-decoders.js";
import { sanitizeTextCampaign } from "./sanitize-text.js";
import { trackerCampaign } from "./tracker.js";

export interface CampaignEntry {
  /** Short name for `--campaign`. */
  id: string;
  campaign: Campaign<never>;
  /** Inputs per CI run. */
  ciCount: number;
}

export const CAMPAIGNS: readonly CampaignEntry[] = [
  { id: "envelope", campaign: envelopeCampaign as Campaign<never>, ciCount: 3000 },
  { id: "decoders", campaign: responseDecodersCampaign as Campaign<never>, ciCount: 2000 },
  { id: "tracker", campaign: trackerCampaign as Campaign<never>, ciCount: 3000 },
  { id: "args", campaign: cliArgsCampaign as Campaign<never>, ciCount: 4000 },
  { id: "sanitize", campaign: sanitizeTextCampaign as Campaign<never>, ciCount: 4000 },
];
