/** A model's `messages_via` in the models file: how /v1/messages reaches an upstream that does not serve it. */
import { z } from 'zod';

/**
 * `chat`: the upstream speaks only chat completions; /v1/messages requests are translated to /chat/completions and
 * its answers (JSON and SSE) back (proxy/translate/). The model then serves `messages` as well. Default: none (the
 * upstream serves /v1/messages itself, when the model lists it).
 */
export const messagesViaSchema = z.enum(['chat'], { error: 'must be chat' });

export type MessagesVia = z.infer<typeof messagesViaSchema>;
