/** The console's entry point: styles (bundled into one console.css, which the model page shares), then the app. */
import 'uplot/dist/uPlot.min.css';
import './styles/base.css';
import './styles/forms.css';
import './styles/tables.css';
import './styles/pages.css';
import { render } from 'preact';
import { App } from './app';

render(<App />, document.getElementById('app')!);
