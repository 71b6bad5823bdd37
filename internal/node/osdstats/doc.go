// Package osdstats is the agent's per-OSD table: for every OSD whose admin socket is on the
// node it reads BlueFS's and BlueStore's counters, BlueFS's usage matrix, RocksDB's per-level
// statistics (when the OSD collects them) and RocksDB's level settings, and turns two
// readings into the seeds' PRISM table (bytes occupied, bytes written per day, share of the
// OSD's writes and β per data class), the DB slot advice and the spill forecast
// (internal/dbsizing). It serves them as prism_osd_* metrics and a summary for the
// StorageNode status (docs/osd-table.md).
package osdstats
