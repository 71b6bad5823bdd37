package smart

// Transcribed fixtures under testdata come from jsongen's recordings.
//go:generate go run ./internal/jsongen -out testdata
