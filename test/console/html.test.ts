/** The model page's templating: interpolated strings are escaped, so text from the models file cannot become markup. */
import { escapeHtml, html } from '../../src/console/html';

// Under another name, so Prettier leaves the exact markup of these templates alone.
const h = html;
const ATTACK = '<img src=x onerror=alert(1)>';

describe('html templates', () => {
  test('escape every interpolated string (stops markup injection into a page)', () => {
    expect(h`<td>${ATTACK}</td>`.value).toBe('<td>&lt;img src=x onerror=alert(1)&gt;</td>');
  });

  test('escape quotes, so a value cannot leave an attribute', () => {
    expect(h`<a title="${'" onclick="x'}">`.value).toBe('<a title="&quot; onclick=&quot;x">');
    expect(escapeHtml(`'&`)).toBe('&#39;&amp;');
  });

  test('insert nested templates as markup and arrays joined, and render nothing for null, undefined and false', () => {
    const rows = ['a<', 'b'].map((s) => h`<li>${s}</li>`);
    expect(h`<ul>${rows}${null}${undefined}${false}</ul>`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>');
  });

  test('render numbers as text', () => {
    expect(h`<td>${0}</td>`.value).toBe('<td>0</td>');
  });
});
