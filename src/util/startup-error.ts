/** A reason the server cannot start that the operator can fix (printed without a stack, exit code 2). */
export class StartupError extends Error {}
