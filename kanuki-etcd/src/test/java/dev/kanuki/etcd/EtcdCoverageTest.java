package dev.kanuki.etcd;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-etcd registers has a contract test. */
class EtcdCoverageTest extends ContractCoverageCheck {
}
