package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// OSDStatus summarises one Ceph OSD whose admin socket is on the node: its DB slot, the slot
// advice, the spill forecast and its data classes (the per-OSD table; every value with more
// precision is in the agent's prism_osd_* metrics). Byte counts are rounded to two significant
// digits so that the status changes only when the table does.
// +kubebuilder:validation:XValidation:rule="(has(self.spilled) && self.spilled) == (has(self.slowUsedBytes) && self.slowUsedBytes > 0)",message="spilled is true exactly when slowUsedBytes is above 0",fieldPath=".spilled"
type OSDStatus struct {
	// id is the OSD's number (osd.<id>).
	// +required
	// +kubebuilder:validation:Minimum=0
	ID int32 `json:"id"`
	// dbTotalBytes is the DB device (slot) as BlueFS owns it.
	// +optional
	DBTotalBytes int64 `json:"dbTotalBytes,omitempty"`
	// dbUsedBytes is BlueFS's use of the DB device.
	// +optional
	DBUsedBytes int64 `json:"dbUsedBytes,omitempty"`
	// slowUsedBytes is BlueFS's use of the slow device: RocksDB files that spilled.
	// +optional
	SlowUsedBytes int64 `json:"slowUsedBytes,omitempty"`
	// levelsOnFast is the deepest RocksDB level the slot holds with the WAL and L0, from the
	// OSD's level targets; -1 when it cannot even hold those.
	// +optional
	// +kubebuilder:validation:Minimum=-1
	LevelsOnFast *int32 `json:"levelsOnFast,omitempty"`
	// slotAdvice is the slot size that keeps levels L0..L<level> on the fast tier, per level.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(i, o, i == 0 || self[i-1].level < o.level)",messageExpression="'slotAdvice[%d]: options must be sorted by level, each once'.format([self.transformList(i, o, i > 0 && self[i-1].level >= o.level, i)[0]])"
	SlotAdvice []OSDSlotOption `json:"slotAdvice,omitempty"`
	// spilled is true when BlueFS already uses the slow device.
	// +optional
	Spilled bool `json:"spilled,omitempty"`
	// spillForecastTime is when the slot spills at today's growth (to the hour); absent when
	// it is not growing, has spilled, or too few readings exist.
	// +optional
	SpillForecastTime *metav1.Time `json:"spillForecastTime,omitempty"`
	// classes are the OSD's data classes: wal, bluefs-log, sst, spilled, objects, and RocksDB
	// levels L0..Ln when the OSD collects their statistics.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=24
	// +kubebuilder:validation:XValidation:rule="self.all(i, c, self.all(j, d, j <= i || d.name != c.name))",messageExpression="'classes[%d]: the class %s is listed twice'.format([self.transformList(i, c, self.exists(j, d, j < i && d.name == c.name), i)[0], self.filter(c, !self.exists_one(d, d.name == c.name))[0].name])"
	Classes []OSDDataClass `json:"classes,omitempty"`
	// message says what could not be read (the last failure, RocksDB level statistics off).
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// OSDSlotOption is one DB slot size of the advice.
type OSDSlotOption struct {
	// level is the deepest RocksDB level the slot keeps on the fast tier.
	// +required
	// +kubebuilder:validation:Minimum=0
	Level int32 `json:"level"`
	// slotBytes is the slot size.
	// +required
	// +kubebuilder:validation:Minimum=0
	SlotBytes int64 `json:"slotBytes"`
}

// OSDDataClass is one row of the per-OSD table.
type OSDDataClass struct {
	// name is the class: wal, bluefs-log, sst, spilled, objects, or L<n>.
	// +required
	// +kubebuilder:validation:MaxLength=16
	Name string `json:"name"`
	// occupiedBytes is the space the class holds.
	// +optional
	OccupiedBytes *int64 `json:"occupiedBytes,omitempty"`
	// writtenBytesPerDay is what it wrote per day between the agent's last two readings.
	// +optional
	WrittenBytesPerDay *int64 `json:"writtenBytesPerDay,omitempty"`
	// writeShare is its part of the OSD's writes over that interval (decimal string, "0.23").
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	WriteShare string `json:"writeShare,omitempty"`
	// beta is β = bytes written since the OSD started ÷ bytes held (decimal string).
	// +optional
	// +kubebuilder:validation:Pattern=`^[0-9]+(\.[0-9]+)?$`
	Beta string `json:"beta,omitempty"`
}
