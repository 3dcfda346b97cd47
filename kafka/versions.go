package kafka

import "github.com/twmb/franz-go/pkg/kmsg"

// versionRange is the versions Pulse serves of one API key.
type versionRange struct{ min, max int16 }

// servedVersions is every API key Pulse answers, with the versions it
// serves. The ranges include what old and new clients ask for and stop below
// the versions that identify topics by UUID (Pulse topics have none):
// Metadata v10+, Fetch v13+, DeleteTopics v6+, CreateTopics v7+ (topic id in
// the response), Produce v13+.
var servedVersions = map[kmsg.Key]versionRange{
	kmsg.Produce:         {0, 10},
	kmsg.Fetch:           {4, 12},
	kmsg.ListOffsets:     {0, 7},
	kmsg.Metadata:        {0, 9},
	kmsg.OffsetCommit:    {0, 8},
	kmsg.OffsetFetch:     {0, 7},
	kmsg.FindCoordinator: {0, 4},
	kmsg.JoinGroup:       {0, 7},
	kmsg.Heartbeat:       {0, 4},
	kmsg.LeaveGroup:      {0, 4},
	kmsg.SyncGroup:       {0, 5},
	kmsg.DescribeGroups:  {0, 5},
	kmsg.ListGroups:      {0, 4},
	kmsg.ApiVersions:     {0, 3},
	kmsg.CreateTopics:    {0, 6},
	kmsg.DeleteTopics:    {0, 5},
	kmsg.InitProducerID:  {0, 4},
	kmsg.DescribeConfigs: {0, 4},

	kmsg.IncrementalAlterConfigs: {0, 1},
	kmsg.CreatePartitions:        {0, 3},
	kmsg.DeleteGroups:            {0, 3},
	kmsg.OffsetDelete:            {0, 0},
}

// served returns the versions Pulse serves of key.
func served(key int16) (versionRange, bool) {
	r, ok := servedVersions[kmsg.Key(key)]
	if !ok {
		return r, false
	}
	if m := kmsg.RequestForKey(key).MaxVersion(); r.max > m {
		r.max = m
	}
	return r, true
}

// Kafka error codes Pulse answers with (see docs/kafka.md).
const (
	errNone                               int16 = 0
	errOffsetOutOfRange                   int16 = 1
	errCorruptMessage                     int16 = 2
	errUnknownTopicOrPartition            int16 = 3
	errMessageTooLarge                    int16 = 10
	errOffsetMetadataTooLarge             int16 = 12
	errCoordinatorNotAvailable            int16 = 15
	errInvalidTopic                       int16 = 17
	errInvalidRequiredAcks                int16 = 21
	errIllegalGeneration                  int16 = 22
	errInconsistentGroupProtocol          int16 = 23
	errInvalidGroupID                     int16 = 24
	errUnknownMemberID                    int16 = 25
	errInvalidSessionTimeout              int16 = 26
	errRebalanceInProgress                int16 = 27
	errInvalidCommitOffsetSize            int16 = 28
	errUnsupportedVersionCode             int16 = 35
	errTopicAlreadyExists                 int16 = 36
	errInvalidPartitions                  int16 = 37
	errInvalidReplicationFactor           int16 = 38
	errInvalidRequest                     int16 = 42
	errUnsupportedForMessageFormat        int16 = 43
	errOutOfOrderSequence                 int16 = 45
	errInvalidProducerEpoch               int16 = 47
	errUnknownProducerID                  int16 = 59
	errTransactionalIDAuthorizationFailed int16 = 53 // a transactional id: Pulse has no transactions
	errKafkaStorageError                  int16 = 56 // a write, fsync or verification failed (full disk, I/O error); retriable
	errInvalidConfig                      int16 = 40
	errInvalidReplicaAssignment           int16 = 39
	errPolicyViolation                    int16 = 44 // past the data dir's topic or partition cap
	errUnknownServerError                 int16 = -1
	errMemberIDRequired                   int16 = 79
	errInvalidRecord                      int16 = 87 // a keyless record to a compacted topic
)

// apiVersions answers ApiVersions with servedVersions.
func (s *Server) apiVersions(_ *kmsg.ApiVersionsRequest) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	for k := kmsg.Key(0); k < 100; k++ {
		r, ok := served(int16(k))
		if !ok {
			continue
		}
		v := kmsg.NewApiVersionsResponseApiKey()
		v.ApiKey, v.MinVersion, v.MaxVersion = int16(k), r.min, r.max
		resp.ApiKeys = append(resp.ApiKeys, v)
	}
	return resp
}
