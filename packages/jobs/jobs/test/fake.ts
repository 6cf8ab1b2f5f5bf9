import type { JobContext, JobHandle, JobOutcome } from 'dsh-jobs'

/** A job whose end, output and cancellation the test drives by hand. */
export interface FakeJob {
  run: (job: JobContext) => JobHandle
  /** Context `run` received (after start). */
  context: () => JobContext
  finish: (outcome?: JobOutcome) => void
  fail: (error: unknown) => void
  /** Output the next `readOutput()` returns. */
  produce: (text: string) => void
  cancels: () => number
  runs: () => number
  /** Resolves when `cancel` is first called. */
  cancelled: Promise<void>
}

/**
 * Make a {@link FakeJob}. Like a real job, it ends when cancelled (`done` resolves); pass `onCancel`
 * to decide otherwise, e.g. `() => {}` to keep it running until the test calls `finish`.
 */
export function fakeJob(options: { readOutput?: boolean; onCancel?: (job: FakeJob) => void } = {}): FakeJob {
  const onCancel = options.onCancel ?? ((job: FakeJob) => job.finish())
  let resolveDone!: (outcome?: JobOutcome) => void
  let rejectDone!: (error: unknown) => void
  const done = new Promise<JobOutcome | void>((resolve, reject) => {
    resolveDone = resolve
    rejectDone = reject
  })
  let pending = ''
  let cancels = 0
  let runs = 0
  let context: JobContext | undefined
  let signalCancelled!: () => void
  const cancelled = new Promise<void>((resolve) => {
    signalCancelled = resolve
  })
  const fake: FakeJob = {
    run: (job) => {
      runs++
      context = job
      const handle: JobHandle = {
        cancel: () => {
          cancels++
          signalCancelled()
          onCancel(fake)
        },
        done,
      }
      if (options.readOutput !== false) {
        handle.readOutput = () => {
          const text = pending
          pending = ''
          return text
        }
      }
      return handle
    },
    context: () => {
      if (!context) throw new Error('job was not started')
      return context
    },
    finish: (outcome) => resolveDone(outcome),
    fail: (error) => rejectDone(error),
    produce: (text) => {
      pending += text
    },
    cancels: () => cancels,
    runs: () => runs,
    cancelled,
  }
  return fake
}
