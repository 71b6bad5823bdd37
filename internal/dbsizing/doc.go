// Package dbsizing sizes BlueStore DB slots from RocksDB's level targets and forecasts when a
// slot spills onto the slow device. Pure: it reads numbers the agent or the plugin hands it.
//
// RocksDB keeps each level of an OSD's database on the first of BlueStore's paths (db, then
// db.slow) whose size holds that level and every level above it; BlueStore gives RocksDB 95 %
// of the DB device as the db path (BlueStore::_open_db in Ceph 16.2). A slot keeps levels
// L0..Lk on the fast tier when it holds the WAL, L0 and the targets of L1..Lk.
package dbsizing
