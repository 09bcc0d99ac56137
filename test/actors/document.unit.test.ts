/** The document actor (`document:<documentId>`) as decider specifications and the rows its projection writes. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DocumentActor } from "../../actors/document/actor.ts"
import { DocumentAlreadyExists, DocumentNotFound } from "../../actors/document/errors.ts"
import { DocumentCreated, DocumentRevised } from "../../actors/document/events.ts"
import { CreateDocument, ReviseDocument } from "../../actors/document/protocol.ts"
import { DocumentState } from "../../actors/document/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T13:00:00.000Z"
const documentId = "doc_00000000000000000000000000000001"
const create = { documentId, orgId: "org_1", workspaceId: "wsp_1", userId: "usr_1", title: "Plan", content: "# Plan\n\n- one\n" }
const created = new DocumentCreated({ ...create, createdAt: T0 })
const revise = { documentId, userId: "usr_2", title: "Plan v2", content: "# Plan\n\n- one\n- two\n" }
const revised = new DocumentRevised({ ...revise, version: 2, revisedAt: T1 })

describe("document decider", () => {
  it("creates a document at the command's time", () => spec(DocumentActor).given([]).when(new CreateDocument(create), meta({ at: T0 })).then([created]))

  it("refuses a second create under the same id", () =>
    spec(DocumentActor).given([created]).when(new CreateDocument({ ...create, title: "Other" })).thenThrows(new DocumentAlreadyExists({ documentId })))

  it("numbers a revision after the latest version", () =>
    spec(DocumentActor).given([created]).when(new ReviseDocument(revise), meta({ at: T1 })).then([revised]))

  it("numbers on from a revised document", () =>
    spec(DocumentActor)
      .given([created, revised])
      .when(new ReviseDocument({ ...revise, content: "three" }), meta({ at: T1 }))
      .then([new DocumentRevised({ ...revise, content: "three", version: 3, revisedAt: T1 })]))

  it("records no version for the same title and content", () =>
    spec(DocumentActor).given([created]).when(new ReviseDocument({ ...revise, title: create.title, content: create.content })).then([]))

  it("refuses to revise a document never created", () =>
    spec(DocumentActor).given([]).when(new ReviseDocument(revise)).thenThrows(new DocumentNotFound({ documentId })))

  it.effect("its state survives the JSON it is stored as", () =>
    Effect.gen(function* () {
      const state = DocumentActor.evolve(DocumentActor.evolve(DocumentActor.initialState, created), revised)
      expect(yield* jsonRoundTrip(DocumentState, state)).toEqual(state)
    })
  )

  it("projects the latest version and a row per version", () =>
    expect(projectedRows(DocumentActor, keyOf(DocumentActor, documentId), [[created, T0], [revised, T1]])).toEqual({
      documents: [
        {
          document_id: documentId,
          org_id: "org_1",
          workspace_id: "wsp_1",
          title: "Plan v2",
          version: 2,
          created_by: "usr_1",
          created_at: T0,
          updated_by: "usr_2",
          updated_at: T1
        }
      ],
      document_versions: [
        { document_id: documentId, version: 1, title: "Plan", content: create.content, user_id: "usr_1", created_at: T0 },
        { document_id: documentId, version: 2, title: "Plan v2", content: revise.content, user_id: "usr_2", created_at: T1 }
      ]
    }))
})
