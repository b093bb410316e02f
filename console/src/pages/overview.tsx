// The mesh at a glance: its nodes, what it holds, and the last minutes as charts.

import type { Overview } from '../../../schemas/admin-api.js';
import { Chart } from '../components/chart.js';
import { ErrorNote, Loading, Page } from '../components/notes.js';
import { duration, rate, shown } from '../format.js';
import { useData } from '../use-data.js';

export function OverviewPage() {
  const { data, error } = useData<Overview>('/api/overview', 5000);
  return (
    <Page title="Overview">
      <ErrorNote error={error} />
      {data === null ? (
        <Loading what="the mesh" />
      ) : (
        <>
          <dl class="figures">
            <div><dt>Streams open</dt><dd data-testid="streams">{data.streams}</dd></div>
            <div><dt>Channels with streams</dt><dd>{data.channels}</dd></div>
            <div><dt>Nodes alive</dt><dd>{data.nodes.filter((n) => n.alive).length} of {data.nodes.length}</dd></div>
            <div><dt>Active keys</dt><dd>{data.keys}</dd></div>
            <div><dt>Bans in force</dt><dd>{data.bans}</dd></div>
          </dl>
          <h2>Nodes</h2>
          <div class="scroll">
            <table>
              <thead>
                <tr><th scope="col">Node</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Version</th><th scope="col">Streams</th><th scope="col">Frames out/s</th><th scope="col">Entries in/s</th><th scope="col">Up</th></tr>
              </thead>
              <tbody>
                {data.nodes.map((n) => (
                  <tr key={n.node}>
                    <th scope="row">{shown(n.node)}</th>
                    <td>{shown(n.role)}</td>
                    <td>{!n.alive ? <span class="bad">silent</span> : n.ready === false ? <span class="warn">not ready</span> : <span class="good">ready</span>}</td>
                    <td>{n.version !== undefined && n.version !== null ? shown(n.version) : '–'}</td>
                    <td>{n.streams ?? '–'}</td>
                    <td>{rate(n.framesOutPerSecond)}</td>
                    <td>{rate(n.entriesPerSecond)}</td>
                    <td>{duration(n.uptimeSeconds)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {data.nodes.length === 0 && <p class="muted">No ingress or gateway has announced itself.</p>}
          <h2>Last minutes</h2>
          {data.history.length < 2 ? (
            <p class="muted">The charts fill in as samples arrive (every 5 seconds).</p>
          ) : (
            <div class="charts">
              <Chart title="Streams open" times={data.history.map((h) => h.at)} series={[{ label: 'streams', values: data.history.map((h) => h.streams), color: '#3b82f6' }]} />
              <Chart
                title="Payloads per second"
                times={data.history.map((h) => h.at)}
                series={[
                  { label: 'stored', values: data.history.map((h) => h.framesInPerSecond), color: '#16a34a' },
                  { label: 'frames delivered', values: data.history.map((h) => h.framesOutPerSecond), color: '#d97706' },
                ]}
              />
            </div>
          )}
        </>
      )}
    </Page>
  );
}
