/*
** kafka.c: algorithm kafka, Kafka's default partitioner for keyed
** records: the Java client's (BuiltInPartitioner.partitionForKey, and
** DefaultPartitioner before it), librdkafka's murmur2 and murmur2_random
** partitioners, kafkajs' DefaultPartitioner and kafka-python's.
**
** The nodes are partitions 0..n-1 in the order they joined (Kafka only
** ever adds partitions at the end). A key goes to partition
** toPositive(murmur2(key bytes)) % n, where toPositive keeps the low 31
** bits (h & 0x7fffffff, not the absolute value). The key's bytes are
** hashed as given, the empty key too. With hash murmur2_kafkajs_legacy
** the hash is kafkajs' legacy murmur2 (LegacyPartitioner, the default
** of kafkajs 1.x) and the rest is the same. A NULL key has no partition
** here (Kafka's sticky or round-robin choice for records without a key
** is not a function of the key). No weights.
*/
#include <stdio.h>

#include "algo.h"

static uint64_t kafka_to_positive(const ring_keys *k, uint64_t h){
  (void)k;
  return h & 0x7fffffff;
}

/* The ring's hash, then Kafka's toPositive. */
static void kafka_key_rule(const ring_config *cfg, ring_keys *k){
  (void)cfg;
  k->finish = kafka_to_positive;
  k->finish_by = "kafka";
}

static int kafka_check_options(ring_config *cfg, unsigned set, char *zErr,
                               size_t nErr){
  (void)set;
  if( cfg->hash!=HASH_MURMUR2_KAFKA && cfg->hash!=HASH_MURMUR2_KAFKAJS_LEGACY ){
    snprintf(zErr, nErr, "algorithm kafka takes hash murmur2_kafka (the "
             "default: Kafka's partitioner) or murmur2_kafkajs_legacy "
             "(kafkajs' LegacyPartitioner), not %s", hash_name(cfg->hash));
    return 1;
  }
  return 0;
}

const ring_algo algo_kafka = {
  .name = "kafka",
  .default_hash = HASH_MURMUR2_KAFKA,
  .units = RING_UNITS_SLOTS,
  .unit_name = "partitions",
  .no_units = "a key's partition is its hash mod n, so it changes at every "
              "position",
  .check_options = kafka_check_options,
  .build = ring_units_join_order,
  .key_rule = kafka_key_rule,
  .key_bits = 31,
  .no_weights = "algorithm kafka has no weights (a key goes to its hash mod "
                "the partition count): every node's weight must be 1",
  .check_commit = ring_check_commit_last_only,
  .doc = {
    .summary = "Kafka's default partitioner for keyed records",
    .reproduces = "a Kafka producer (Java, librdkafka, kafkajs) on a topic",
    .cost = "O(1)",
    .weights = "no (all 1)",
    .remove = "only the last nodes (partitions are only added)",
    .movement = "most keys move when partitions are added: mod n",
    .options = "`hash`: `murmur2_kafka` (default) or "
               "`murmur2_kafkajs_legacy`",
    .replicas = "the partitions after the owner (join order)",
  },
};
