/** Token usage as the meter counts it, whichever endpoint reported it (prompt/input and completion/output tokens). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
}
