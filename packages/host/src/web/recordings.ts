import type { ServerResponse } from 'node:http'
import type { RecorderService } from 'dsh-terminal-recorder'
import { sendBody, WebRequestError } from './http-io'

/** What `GET /recordings` answers: whether this host records, and its recordings, newest first. */
export interface RecordingsListing {
  readonly enabled: boolean
  readonly recordings: readonly string[]
}

/** The recordings the player may offer; none (and `enabled: false`) when the composition mounts no recorder. */
export async function recordingsList(recorder: RecorderService | undefined): Promise<RecordingsListing> {
  if (!recorder) return { enabled: false, recordings: [] }
  return { enabled: true, recordings: await recorder.list() }
}

/**
 * `GET /recordings/<name>`: one recording's text, read through the recorder (bare `*.cast` names of
 * its directory only). 404 `NO_RECORDING` for anything else, `NOT_RECORDING` when nothing records.
 */
export async function sendRecording(res: ServerResponse, recorder: RecorderService | undefined, segment: string): Promise<void> {
  if (!recorder) throw new WebRequestError(404, 'NOT_RECORDING', 'this host records nothing (its composition has no enabled record entry)')
  let name: string
  try {
    name = decodeURIComponent(segment)
  } catch {
    throw new WebRequestError(404, 'NO_RECORDING', 'no such recording')
  }
  let text: string
  try {
    text = await recorder.read(name)
  } catch (error) {
    if ((error as { code?: unknown }).code === 'NO_RECORDING') throw new WebRequestError(404, 'NO_RECORDING', (error as Error).message)
    throw error
  }
  sendBody(res, 'application/x-asciicast; charset=utf-8', text)
}
