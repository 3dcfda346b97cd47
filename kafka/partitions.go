package kafka

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// createPartitions grows topics to the partition count each entry asks
// for (Kafka's CreatePartitions, which kafka-topics --alter --partitions,
// kadm's CreatePartitions / UpdatePartitions and kafkajs' createPartitions
// send). Partitions never shrink: a count not above the current one is
// INVALID_PARTITIONS, as in Kafka. Manual replica assignments name brokers
// Pulse does not have beyond itself and are refused unless they name
// broker 0 only. Past the data dir's partition cap: POLICY_VIOLATION.
func (s *Server) createPartitions(r *kmsg.CreatePartitionsRequest) *kmsg.CreatePartitionsResponse {
	resp := r.ResponseKind().(*kmsg.CreatePartitionsResponse)
	seen := map[string]bool{}
	for _, t := range r.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		code, msg := func() (int16, string) {
			if seen[t.Topic] {
				return errInvalidRequest, "topic " + t.Topic + " appears twice in the request"
			}
			seen[t.Topic] = true
			info, err := s.eng.Describe(t.Topic)
			if err != nil {
				return engineErrorCode(err), err.Error()
			}
			have := int32(len(info.Partitions))
			if t.Count <= have {
				return errInvalidPartitions, fmt.Sprintf("topic %s has %d partitions, which is not fewer than the %d asked for: partitions only grow", t.Topic, have, t.Count)
			}
			for _, a := range t.Assignment {
				if msg, ok := replicasOnPulse(a.Replicas); !ok {
					return errInvalidReplicaAssignment, msg
				}
			}
			cfg := info.Config
			cfg.Partitions = int(t.Count)
			alter := s.eng.AlterTopic
			if r.ValidateOnly {
				alter = s.eng.CheckAlter
			}
			if err := alter(t.Topic, cfg); err != nil {
				code := engineErrorCode(err)
				if code == errInvalidConfig {
					code = errInvalidPartitions
				}
				return code, err.Error()
			}
			return errNone, ""
		}()
		rt.ErrorCode = code
		if msg != "" {
			rt.ErrorMessage = kmsg.StringPtr(msg)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// replicasOnPulse checks the replicas a manual assignment (CreateTopics,
// CreatePartitions) gives one partition: Pulse is one broker, so they
// must be broker 0 alone. It returns the reason when they are not.
func replicasOnPulse(replicas []int32) (string, bool) {
	for _, b := range replicas {
		if b != nodeID {
			return fmt.Sprintf("replica assignment names broker %d: Pulse is broker %d only", b, nodeID), false
		}
	}
	if len(replicas) != 1 {
		return fmt.Sprintf("replica assignment %v: Pulse is one broker, a partition has the one replica %d", replicas, nodeID), false
	}
	return "", true
}
