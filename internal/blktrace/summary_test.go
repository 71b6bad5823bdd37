package blktrace

import (
	"reflect"
	"testing"
)

func TestAggregate(t *testing.T) {
	const osd = 100
	recs := []Record{
		{TGID: osd, Comm: "tp_osd_tp", RWBS: "W", Major: 7, Minor: 1, Sector: 128, Bytes: 4096},
		{TGID: osd, Comm: "tp_osd_tp", RWBS: "W", Major: 7, Minor: 1, Sector: 136, Bytes: 4096},
		{TGID: osd, Comm: "tp_osd_tp", RWBS: "W", Major: 7, Minor: 1, Sector: 2 << 21, Bytes: 65536}, // 2 GiB
		{TGID: osd, Comm: "bstore_kv_sync", RWBS: "FWS", Major: 7, Minor: 1},
		{TGID: 555, Comm: "pvcreate", RWBS: "R", Major: 7, Minor: 1, Bytes: 131072},
		{TGID: osd, Comm: "tp_osd_tp", RWBS: "W", Major: 7, Minor: 2, Sector: 128, Bytes: 4096},       // another disk
		{TGID: osd, Comm: "bstore_kv_sync", RWBS: "W", Major: 7, Minor: 0, Sector: 2048, Bytes: 4096}, // the DB partition
		{TGID: osd, Comm: "bstore_kv_sync", RWBS: "W", Major: 7, Minor: 0, Sector: 100, Bytes: 4096},  // before it (GPT)
	}
	data := Aggregate(recs, Device{Major: 7, Minor: 1, Sectors: 10 << 21}, osd)
	want := DeviceTrace{
		Groups: []Group{
			{Comm: "bstore_kv_sync", RWBS: "FWS", Region: "0-8KiB", Count: 1},
			{Comm: "tp_osd_tp", RWBS: "W", Region: "8KiB-1MiB", Size: 4096, Count: 2, FirstSector: 128, LastSector: 136, Unaligned: 1},
			{Comm: "tp_osd_tp", RWBS: "W", Region: "2-3GiB", Size: 65536, Count: 1, FirstSector: 2 << 21, LastSector: 2 << 21},
		},
		Others: []Row{{Key: "pvcreate", Dir: Read, Count: 1, Bytes: 131072}},
	}
	if !reflect.DeepEqual(data, want) {
		t.Errorf("data device:\n%+v\nwant\n%+v", data, want)
	}
	db := Aggregate(recs, Device{Major: 7, Minor: 0, Start: 2048, Sectors: 2048}, osd)
	if len(db.Groups) != 1 || db.Groups[0].FirstSector != 0 || db.Groups[0].Region != "0-8KiB" || len(db.Others) != 0 {
		t.Errorf("DB partition: %+v; want one group at its sector 0", db)
	}
	if all := Aggregate(recs, Device{Major: 7, Minor: 1, Sectors: 10 << 21}, 0); len(all.Others) != 0 || len(all.Groups) != 4 {
		t.Errorf("tgid 0 must take every record as the OSD's: %+v", all)
	}
	totals := data.Totals()
	if totals[Write].Bytes != 2*4096+65536 || totals[Write].Count != 4 || totals[Read].Count != 0 {
		t.Errorf("totals %+v", totals)
	}
	if got := data.BySize(); got[0].Key != "64KiB-<1MiB" || got[0].Bytes != 65536 || got[1].Key != "<=4KiB" || got[2].Key != "0 (flush)" {
		t.Errorf("BySize %+v", got)
	}
}

func TestRegionAndSizeBucket(t *testing.T) {
	for sector, want := range map[uint64]string{0: "0-8KiB", 15: "0-8KiB", 16: "8KiB-1MiB", 2047: "8KiB-1MiB", 2048: "1MiB-1GiB",
		1<<21 - 1: "1MiB-1GiB", 1 << 21: "1-2GiB", 9<<21 + 5: "9-10GiB"} {
		if got := Region(sector); got != want {
			t.Errorf("Region(%d) = %s, want %s", sector, got, want)
		}
	}
	for size, want := range map[uint64]string{0: "0 (flush)", 512: "<=4KiB", 4096: "<=4KiB", 4097: "4-16KiB", 65535: "16-<64KiB",
		65536: "64KiB-<1MiB", 1<<20 - 1: "64KiB-<1MiB", 1 << 20: "1-4MiB", 4 << 20: "1-4MiB", 4<<20 + 1: ">4MiB"} {
		if got := SizeBucket(size); got != want {
			t.Errorf("SizeBucket(%d) = %s, want %s", size, got, want)
		}
	}
}
