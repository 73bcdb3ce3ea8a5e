/**
 * The console's top bar for a server-rendered page (the model page): the same links, words and markup as the browser
 * app's, with Sign out as a plain form (the page runs no script), when someone is signed in; else a way into the console.
 */
import { MEMBER_PAGES, MODELS_PAGE, OPERATOR_PAGES, navHref, type NavPage } from './console-nav';
import { html, type Html } from './html';

/** Who the page is shown to: a signed-in account's email (none for an API-only account) and role. */
export interface Viewer {
  email: string | null;
  role: 'member' | 'admin';
}

function links(pages: readonly NavPage[], current: string): Html[] {
  return pages.map((p) => html`<a href="${navHref(p)}" ${p.path === current && html`aria-current="page"`}>${p.label}</a>`);
}

/** The skip link and the header; `current` is the path of the page shown. */
export function topbar(current: string, viewer: Viewer | undefined): Html {
  const skip = html`<a class="skip" href="#main">Skip to content</a>`;
  if (!viewer) {
    return html`${skip}
      <header class="topbar">
        <a class="brand" href="/console/">tokenmeter</a>
        <nav aria-label="Main">${links([MODELS_PAGE], current)} <a href="/console/">Console</a></nav>
      </header>`;
  }
  return html`${skip}
    <header class="topbar">
      <a class="brand" href="/console/">tokenmeter</a>
      <nav aria-label="Main">
        ${links(MEMBER_PAGES, current)}
        ${viewer.role === 'admin' && html`<span class="admin-nav"><span class="nav-group">Operator</span>${links(OPERATOR_PAGES, current)}</span>`}
        ${links([MODELS_PAGE], current)}
      </nav>
      <div class="who">
        <span class="muted" title="${viewer.email ?? ''}">${viewer.email ?? ''}</span>
        <form method="post" action="/console/api/logout">
          <button type="submit" class="link">Sign out</button>
        </form>
      </div>
    </header>`;
}
