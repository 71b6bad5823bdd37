package nvme

// The log-page fixtures under testdata/logs come from loggen's recordings.
//go:generate go run ./internal/loggen -out testdata/logs
