package smart

// Report is what one `smartctl -j -a` (or `-x`) run says about a device.
// Text fields are as smartctl printed them; absent numbers are zero with
// their Known flag false.
type Report struct {
	Protocol         string // device.protocol: "ATA", "NVMe", "SCSI"
	ModelFamily      string // smartctl drive database family, "" when not in the database
	ModelName        string
	SerialNumber     string
	FirmwareVersion  string
	CapacityBytes    uint64 // user_capacity.bytes
	LogicalBlockSize uint32 // logical_block_size, bytes

	// PowerOnHours is power_on_time.hours, or for ATA drives without it the
	// raw value of attribute 9 (Power_On_Hours), which smartctl derives it from.
	PowerOnHours      uint64
	PowerOnHoursKnown bool

	Attributes []Attribute // ata_smart_attributes.table, in table order
	NVMe       *NVMeHealth // nvme_smart_health_information_log, nil for non-NVMe
	Messages   []string    // smartctl.messages[].string
}

// Attribute is one row of the ATA SMART attribute table.
type Attribute struct {
	ID        uint8
	Name      string // smartctl's name for this id in the drive's family
	Value     uint8  // normalized current value
	Worst     uint8
	Thresh    uint8
	Raw       uint64 // raw.value: the 48-bit raw field as an integer
	RawKnown  bool   // false when raw.value was absent
	RawString string // raw.string: smartctl's rendering, e.g. "34 (Min/Max 18/44)"
}

// NVMeHealth is smartctl's rendering of the NVMe SMART / Health log. Unlike
// the log page itself, TemperatureC is already in °C (kelvin − 273).
type NVMeHealth struct {
	CriticalWarning         uint8
	TemperatureC            int
	AvailableSpare          uint8
	AvailableSpareThreshold uint8
	PercentageUsed          uint8 // may exceed 100; 255 means "255 or more"
	DataUnitsRead           uint64
	DataUnitsWritten        uint64 // units of 1000 × 512 bytes
	HostReads               uint64
	HostWrites              uint64
	ControllerBusyTime      uint64
	PowerCycles             uint64
	PowerOnHours            uint64
	UnsafeShutdowns         uint64
	MediaErrors             uint64
	NumErrLogEntries        uint64
}

// Attribute returns the row with the given id.
func (r Report) Attribute(id uint8) (Attribute, bool) {
	for _, a := range r.Attributes {
		if a.ID == id {
			return a, true
		}
	}
	return Attribute{}, false
}
