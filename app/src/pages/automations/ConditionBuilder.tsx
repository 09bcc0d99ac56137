/**
 * A condition tree builder (spec 2.8): groups combining their children with `and` or `or`, nested,
 * and conditions. For an event trigger the properties, the operators each admits and an enum's
 * values come from the schema registry's label; for a `condition` step a property is a dotted path
 * into the run (`trigger.…`, `steps.<name>.output.…`) and any operator applies.
 */
import {
  changeNode,
  type ConditionDraft,
  type GroupDraft,
  inputKind,
  kindIn,
  type Label,
  newCondition,
  nextId,
  type NodeDraft,
  OPERATOR_WORDS,
  operatorsOf,
  type ValueKind
} from "./model.ts"

/** A tree nests at most this many levels (the server's limit). */
const MAX_DEPTH = 8

interface BuilderProps {
  readonly root: GroupDraft
  readonly onChange: (root: GroupDraft) => void
  /** The watched label (an event trigger), or undefined for a `condition` step's paths. */
  readonly label: Label | undefined
  /** Added to every control's name so that two builders on a page stay apart, e.g. " in step 2". */
  readonly scope: string
}

export const ConditionBuilder = ({ root, onChange, label, scope }: BuilderProps) => {
  const change = (id: string, f: (node: NodeDraft) => NodeDraft | undefined) => onChange(changeNode(root, id, f))
  return <GroupEditor group={root} depth={1} isRoot change={change} root={root} label={label} scope={scope} />
}

interface GroupProps {
  readonly group: GroupDraft
  readonly depth: number
  readonly isRoot: boolean
  readonly root: GroupDraft
  readonly change: (id: string, f: (node: NodeDraft) => NodeDraft | undefined) => void
  readonly label: Label | undefined
  readonly scope: string
}

const GroupEditor = ({ group, depth, isRoot, root, change, label, scope }: GroupProps) => {
  const properties = label === undefined ? [] : Object.keys(label.properties)
  const addCondition = () => {
    const property = label === undefined ? "" : properties[0]
    const operator = operatorsOf(label, property)[0] ?? "eq"
    change(group.id, (node) => ({ ...(node as GroupDraft), children: [...(node as GroupDraft).children, newCondition(nextId(root, "c"), property, operator)] }))
  }
  const addGroup = () =>
    change(group.id, (node) => ({
      ...(node as GroupDraft),
      children: [...(node as GroupDraft).children, { kind: "group", id: nextId(root, "g"), combinator: "and", children: [] }]
    }))
  const noProperties = label !== undefined && properties.length === 0
  return (
    <fieldset className={isRoot ? "cond-group cond-root" : "cond-group"}>
      <legend>{isRoot ? "Conditions" : `Group ${group.id}`}</legend>
      <div className="row">
        <label>
          Match{" "}
          <select
            aria-label={`How group ${group.id} combines${scope}`}
            value={group.combinator}
            onChange={(event) => change(group.id, (node) => ({ ...(node as GroupDraft), combinator: event.target.value as "and" | "or" }))}
          >
            <option value="and">all of these (and)</option>
            <option value="or">any of these (or)</option>
          </select>
        </label>
      </div>
      {group.children.length === 0 ? (
        <p className="muted">{isRoot ? "No conditions: every event counts." : "An empty group: with all, it holds; with any, it does not."}</p>
      ) : (
        <ul className="cond-list">
          {group.children.map((child) => (
            <li key={child.id}>
              {child.kind === "group" ? (
                <GroupEditor group={child} depth={depth + 1} isRoot={false} root={root} change={change} label={label} scope={scope} />
              ) : (
                <ConditionRow condition={child} change={change} label={label} scope={scope} />
              )}
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="button" onClick={addCondition} disabled={noProperties} aria-label={`Add condition to group ${group.id}${scope}`}>
          Add condition
        </button>
        <button type="button" onClick={addGroup} disabled={depth >= MAX_DEPTH} aria-label={`Add group to group ${group.id}${scope}`}>
          Add group
        </button>
        {!isRoot && (
          <button type="button" className="danger" onClick={() => change(group.id, () => undefined)} aria-label={`Remove group ${group.id}${scope}`}>
            Remove group
          </button>
        )}
      </div>
      {noProperties && <p className="muted">This label declares no properties, so there is nothing to compare.</p>}
    </fieldset>
  )
}

interface RowProps {
  readonly condition: ConditionDraft
  readonly change: (id: string, f: (node: NodeDraft) => NodeDraft | undefined) => void
  readonly label: Label | undefined
  readonly scope: string
}

const ConditionRow = ({ condition, change, label, scope }: RowProps) => {
  const { id } = condition
  const set = (patch: Partial<ConditionDraft>) => change(id, (node) => ({ ...(node as ConditionDraft), ...patch }))
  const kind: ValueKind = kindIn(label)(condition.property)
  const operators = operatorsOf(label, condition.property)
  const name = (what: string) => `${what} of condition ${id}${scope}`
  const setProperty = (property: string) => {
    const admitted = operatorsOf(label, property)
    const sameType = kindIn(label)(property) === kind
    set({
      property,
      operator: admitted.includes(condition.operator) ? condition.operator : admitted[0] ?? "eq",
      ...(sameType ? {} : { text: "", picked: [] })
    })
  }
  return (
    <div className="cond-row">
      <span className="cond-id" aria-hidden="true">
        {id}
      </span>
      {label === undefined ? (
        <input
          aria-label={name("Path")}
          placeholder="trigger.payload.status"
          value={condition.property}
          onChange={(event) => set({ property: event.target.value })}
        />
      ) : (
        <select aria-label={name("Property")} value={condition.property} onChange={(event) => setProperty(event.target.value)}>
          {!Object.hasOwn(label.properties, condition.property) && <option value={condition.property}>{condition.property === "" ? "Choose a property" : `${condition.property} (not in ${label.label})`}</option>}
          {Object.entries(label.properties).map(([property, definition]) => (
            <option key={property} value={property}>
              {property} ({definition.type})
            </option>
          ))}
        </select>
      )}
      <select aria-label={name("Operator")} value={condition.operator} onChange={(event) => set({ operator: event.target.value as ConditionDraft["operator"] })}>
        {!operators.includes(condition.operator) && <option value={condition.operator}>{OPERATOR_WORDS[condition.operator]} (not for this property)</option>}
        {operators.map((operator) => (
          <option key={operator} value={operator}>
            {OPERATOR_WORDS[operator]} ({operator})
          </option>
        ))}
      </select>
      <ValueInput condition={condition} kind={kind} label={label} name={name} set={set} />
      <button type="button" className="danger" onClick={() => change(id, () => undefined)} aria-label={`Remove condition ${id}${scope}`}>
        Remove
      </button>
    </div>
  )
}

interface ValueProps {
  readonly condition: ConditionDraft
  readonly kind: ValueKind
  readonly label: Label | undefined
  readonly name: (what: string) => string
  readonly set: (patch: Partial<ConditionDraft>) => void
}

const ValueInput = ({ condition, kind, label, name, set }: ValueProps) => {
  const values = (label !== undefined && Object.hasOwn(label.properties, condition.property) ? label.properties[condition.property].values : undefined) ?? []
  switch (inputKind(condition.operator, kind)) {
    case "none":
      return <span className="muted">(no value)</span>
    case "enum":
      return (
        <select aria-label={name("Value")} value={condition.text} onChange={(event) => set({ text: event.target.value })}>
          <option value="">Choose a value</option>
          {values.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      )
    case "enum-list":
      return (
        <fieldset className="cond-values">
          <legend>{name("Values")}</legend>
          {values.map((value) => (
            <label key={value}>
              <input
                type="checkbox"
                checked={condition.picked.includes(value)}
                onChange={(event) => set({ picked: event.target.checked ? [...condition.picked, value] : condition.picked.filter((v) => v !== value) })}
              />{" "}
              {value}
            </label>
          ))}
        </fieldset>
      )
    case "list":
      return <textarea aria-label={`${name("Values")}, one per line`} rows={3} value={condition.text} onChange={(event) => set({ text: event.target.value })} />
    case "boolean":
      return (
        <select aria-label={name("Value")} value={condition.text} onChange={(event) => set({ text: event.target.value })}>
          <option value="">Choose</option>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      )
    case "number":
      return <input type="number" step="any" aria-label={name("Value")} value={condition.text} onChange={(event) => set({ text: event.target.value })} />
    case "datetime":
      return <input type="datetime-local" step="1" aria-label={`${name("Value")} (your time)`} value={condition.text} onChange={(event) => set({ text: event.target.value })} />
    case "text":
      return <input aria-label={name("Value")} value={condition.text} onChange={(event) => set({ text: event.target.value })} />
  }
}
