export { errorMessage } from './error-message'
export { raceAbort, settledWithin, withTimeout } from './races'
export { dropUtf8Head, type FittedText, fitTailAndTrailer, keepUtf8Head, keepUtf8Tail, type Utf8Cut, utf8ByteLength } from './utf8'
