/** The assistant's operator settings as a service, so the engine and the capabilities read the one
 * configuration the node started with. */
import { Context } from "effect"
import type { AssistantConfig } from "../platform/Config.ts"

export class AssistantSettings extends Context.Tag("svc/assistant/Settings")<AssistantSettings, AssistantConfig>() {}
