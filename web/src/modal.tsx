/**
 * A modal dialog on the browser's own <dialog>: it traps focus, makes the page behind it inert, closes on Escape and
 * gives focus back to the button that opened it, all without code of ours.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function Modal(props: {
  open: boolean;
  /** Called when the dialog closed itself (Escape); the owner sets `open` false. */
  onClose: () => void;
  /** The id of the heading that names it. */
  labelledBy: string;
  /** While set, Escape does not close it (a secret shown once must be acknowledged with a button). */
  holdOpen?: boolean;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="modal"
      aria-labelledby={props.labelledBy}
      onCancel={(event) => props.holdOpen && event.preventDefault()}
      onClose={props.onClose}
    >
      {props.open && props.children}
    </dialog>
  );
}
