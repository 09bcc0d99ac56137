import { Layer } from "effect"
import * as Db from "../../streams/Db.ts"
import * as EmbeddedLog from "../../streams/EmbeddedLog.ts"
import { databaseUrl, uniqueName } from "../support/env.ts"
import { eventLogContract } from "./eventlog.contract.ts"

const schema = uniqueName("t")

eventLogContract(
  "embedded (Postgres table)",
  EmbeddedLog.layer({ logSchema: `${schema}_log`, partitions: 6 }).pipe(
    Layer.provide(Db.layer({ url: databaseUrl, schema }))
  )
)
