package bench

// writebackAll does nothing on Windows, which has no sync(2): benchmark
// steps there may queue behind the write-back of the step before.
func writebackAll() {}
