/** A button that copies a text to the clipboard and says, in a status line, whether the browser let it. */
import { useState } from 'preact/hooks';
import { ErrorNote, Notice } from './ui';

export function CopyButton({ text, label }: { text: string; /** Its accessible name, when "Copy" alone is ambiguous. */ label?: string }) {
  const [copied, setCopied] = useState<{ text: string; ok: boolean }>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied({ text, ok: true });
    } catch {
      setCopied({ text, ok: false });
    }
  };
  // A word about another text (the snippet changed since) would mislead: only the one copied is reported.
  const report = copied?.text === text ? copied : undefined;
  return (
    <>
      <button type="button" class="secondary copy" onClick={copy} aria-label={label}>
        Copy
      </button>
      {report?.ok === true && <Notice>Copied to the clipboard.</Notice>}
      {report?.ok === false && <ErrorNote message="The browser did not allow copying; select the text and copy it by hand." />}
    </>
  );
}
