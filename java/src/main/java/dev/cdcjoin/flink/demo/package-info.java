/**
 * The demo job: a generated users/domains Debezium trace, or two Kafka topics of Debezium JSON,
 * joined in an embedded MiniCluster ({@link dev.cdcjoin.flink.demo.UsersDomainsDemo}).
 */
package dev.cdcjoin.flink.demo;
