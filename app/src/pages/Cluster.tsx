/**
 * The cluster (`cluster.get`, Owner only), refreshed every 5 seconds: each node with the partitions
 * it owns, and charts of the events appended per second and of the read models' lag over the last
 * minutes, from the samples the answering node keeps.
 */
import { useQuery } from "@tanstack/react-query"
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts"
import type { ClusterNode, ClusterView, ThroughputSample } from "../../../src/platform/Wire.ts"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { useAccess } from "../session.tsx"
import { ErrorNote, Loading, PageTitle } from "../ui.tsx"
import "./Cluster.css"

const REFRESH_MS = 5_000

const clockTime = (at: string) => new Date(at).toLocaleTimeString()

const NodeCard = ({ node }: { node: ClusterNode }) => {
  const ready = new Set(node.ready ?? [])
  return (
    <li className="card cluster-node">
      <h3>
        <code>{node.nodeId}</code> {node.self && <span className="badge-pill">answered this page</span>}
        {node.draining === true && <span className="badge-pill">draining</span>}
      </h3>
      <p className="muted">{node.version === null ? "Not reported lately: version and readiness unknown" : `Version ${node.version}`}</p>
      {node.partitions.length === 0 ? (
        <p>No partitions assigned (the group may be rebalancing).</p>
      ) : (
        <>
          <p>
            Owns {node.partitions.length} {node.partitions.length === 1 ? "partition" : "partitions"}
            {node.ready === null ? "; whether each is caught up is not known." : `, ${node.ready.length} caught up and deciding.`}
          </p>
          <ul className="partition-chips" aria-label={`Partitions of ${node.nodeId}`}>
            {node.partitions.map((partition) => (
              <li key={partition} className={ready.has(partition) ? "ready" : undefined}>
                {partition}
                {node.ready !== null && <span className="visually-hidden">{ready.has(partition) ? " (ready)" : " (catching up)"}</span>}
              </li>
            ))}
          </ul>
        </>
      )}
    </li>
  )
}

/** One measure of the samples over time; the caption says the latest value in words. */
const SampleChart = ({ samples, measure, title, unit, color }: { samples: ReadonlyArray<ThroughputSample>; measure: "eventsPerSecond" | "lag"; title: string; unit: string; color: string }) => {
  const latest = samples.at(-1)
  return (
    <figure className="card cluster-chart" aria-label={title}>
      <figcaption>
        <strong>{title}</strong>{" "}
        <span className="muted" data-testid={`${measure}-latest`}>
          {latest === undefined ? "no samples yet" : `latest ${latest[measure]} ${unit}`}
        </span>
      </figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={[...samples]} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid stroke="var(--line)" strokeDasharray="3 3" />
          <XAxis dataKey="at" tickFormatter={clockTime} minTickGap={40} />
          <YAxis allowDecimals={measure === "eventsPerSecond"} width={48} />
          <Tooltip labelFormatter={(at) => clockTime(String(at))} formatter={(value) => [`${value} ${unit}`, title]} />
          {/* no animation: each refresh redraws at once */}
          <Line type="linear" dataKey={measure} stroke={color} strokeWidth={2} dot={false} isAnimationActive={false} />
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

const ClusterOverview = ({ place }: { place: Place }) => {
  const cluster = useQuery({
    queryKey: ["cluster", place.org, place.ws],
    queryFn: () => invoke<ClusterView>(place, "cluster.get"),
    refetchInterval: REFRESH_MS
  })
  if (cluster.isPending) return <Loading what="the cluster" />
  // a failed refresh keeps what was shown
  if (cluster.data === undefined) return <ErrorNote error={cluster.error} title="The cluster could not be loaded" />
  const { nodes, partitions, throughput } = cluster.data
  const lag = partitions.reduce((n, p) => n + p.lag, 0)
  return (
    <>
      <ErrorNote error={cluster.isRefetchError ? cluster.error : null} title="The cluster could not be refreshed" />
      <section aria-labelledby="nodes-heading">
        <h2 id="nodes-heading">Nodes</h2>
        <p className="muted">
          {nodes.length} {nodes.length === 1 ? "node" : "nodes"}, {partitions.length} partitions, {lag} {lag === 1 ? "event" : "events"} not yet in the read models.
        </p>
        <ul className="cluster-nodes">
          {nodes.map((node) => (
            <NodeCard key={node.nodeId} node={node} />
          ))}
        </ul>
      </section>
      <section aria-labelledby="pace-heading">
        <h2 id="pace-heading">Throughput and lag</h2>
        <p className="muted">Sampled by the node that answered, over the last minutes; a node that just started has a short history.</p>
        <div className="cluster-charts">
          <SampleChart samples={throughput} measure="eventsPerSecond" title="Events appended per second" unit="events/s" color="var(--accent)" />
          <SampleChart samples={throughput} measure="lag" title="Lag (events not yet projected)" unit="events" color="var(--danger)" />
        </div>
      </section>
    </>
  )
}

export const ClusterPage = ({ place }: PageProps) => {
  const access = useAccess(place)
  return (
    <>
      <PageTitle>Cluster</PageTitle>
      {access.isPending ? (
        <Loading what="your access" />
      ) : !access.can("cluster.get") ? (
        <p className="warn-note" role="note">
          Only organization Owners can see the cluster.
        </p>
      ) : (
        <ClusterOverview place={place} />
      )}
    </>
  )
}
