// Package clusterinfo holds the plain types of what a Kafka cluster shows
// beyond the engine's TopicInfo: partition placement and consumer groups.
// It has no dependencies, so the terminal UI can name them without pulling
// in a Kafka client.
package clusterinfo

// Partition is one partition's placement and offsets on the cluster.
type Partition struct {
	Partition int     `json:"partition"`
	Leader    int32   `json:"leader"` // broker id; -1 when leaderless
	Replicas  []int32 `json:"replicas"`
	ISR       []int32 `json:"isr"`
	LogStart  int64   `json:"log_start"`
	HWM       int64   `json:"hwm"`
	LSO       int64   `json:"lso"`  // last stable offset
	Size      int64   `json:"size"` // bytes from DescribeLogDirs (leader); -1: not available
	Err       string  `json:"err,omitempty"`
}

// Topic is a topic's cluster-side description.
type Topic struct {
	Name              string            `json:"name"`
	ReplicationFactor int               `json:"replication_factor"`
	Configs           map[string]string `json:"configs"` // non-default configs only
	Partitions        []Partition       `json:"partitions"`
	SizeKnown         bool              `json:"size_known"` // DescribeLogDirs answered
}

// Group is one consumer group.
type Group struct {
	Name       string           `json:"name"`
	State      string           `json:"state"` // Empty, Stable, PreparingRebalance, Dead, ...
	Protocol   string           `json:"protocol"`
	Members    []Member         `json:"members"`
	Partitions []GroupPartition `json:"partitions"` // committed offsets, sorted by topic, partition
	Err        string           `json:"err,omitempty"`
}

// Member is one member of a group with its assignment.
type Member struct {
	ID       string           `json:"id"`
	ClientID string           `json:"client_id"`
	Host     string           `json:"host"`
	Assigned map[string][]int `json:"assigned"` // topic → partitions
}

// GroupPartition is a group's committed offset on one partition and its lag
// (HWM − committed, as kaf, ktea and Redpanda Console compute it).
type GroupPartition struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Committed int64  `json:"committed"`
	HWM       int64  `json:"hwm"`
	Lag       int64  `json:"lag"`
	Member    string `json:"member,omitempty"` // assigned member id, "" when none
}
