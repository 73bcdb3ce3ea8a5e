/**
 * A row's destructive action (disable an account, revoke a key, delete a webhook endpoint) kept out of reach of a stray
 * click: it sits in the row's "More" menu, and choosing it asks first, in place of the menu. Focus follows: the menu's
 * item when it opens, the confirming button when it asks, the "More" button again after Cancel or Escape.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export interface DangerMenuProps {
  /** What the row is, as a reader knows it: names the menu button ("More actions for ada@example.org"). */
  subject: string;
  /** The menu's item ("Revoke"). */
  item: string;
  /** The question, saying what follows ("Revoke it? Requests with this key fail at once."). */
  question: string;
  /** The confirming button ("Revoke key"). */
  confirm: string;
  /** The confirmation's accessible name ("Confirm revoking notebook"). */
  confirmName: string;
  busy: boolean;
  run: () => Promise<void>;
}

type State = 'closed' | 'open' | 'confirming';

export function DangerMenu(props: DangerMenuProps) {
  const [state, setState] = useState<State>('closed');
  const opener = useRef<HTMLButtonElement>(null);
  const item = useRef<HTMLButtonElement>(null);
  const confirmButton = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    if (state === 'open') item.current?.focus();
    else if (state === 'confirming') confirmButton.current?.focus();
    else if (wasOpen.current) opener.current?.focus();
    wasOpen.current ||= state !== 'closed';
  }, [state]);

  if (state === 'confirming') {
    return (
      <div class="confirm" role="group" aria-label={props.confirmName}>
        <span>{props.question}</span>
        <button
          type="button"
          class="danger"
          onClick={() => void props.run().then(() => setState('closed'))}
          disabled={props.busy}
          ref={confirmButton}
        >
          {props.confirm}
        </button>
        <button type="button" class="secondary" onClick={() => setState('closed')}>
          Cancel
        </button>
      </div>
    );
  }
  return (
    <div
      class="menu-wrap"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && state === 'open') setState('closed');
      }}
    >
      <button
        type="button"
        class="secondary"
        aria-haspopup="menu"
        aria-expanded={state === 'open'}
        aria-label={`More actions for ${props.subject}`}
        onClick={() => setState(state === 'open' ? 'closed' : 'open')}
        ref={opener}
      >
        More ▾
      </button>
      {state === 'open' && (
        <ul class="menu" role="menu" aria-label={`Actions for ${props.subject}`}>
          <li role="none">
            <button type="button" role="menuitem" class="menu-item danger-text" onClick={() => setState('confirming')} ref={item}>
              {props.item}
            </button>
          </li>
        </ul>
      )}
    </div>
  );
}
