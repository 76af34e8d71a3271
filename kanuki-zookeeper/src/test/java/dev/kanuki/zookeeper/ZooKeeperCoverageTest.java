package dev.kanuki.zookeeper;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-zookeeper registers has a contract test. */
class ZooKeeperCoverageTest extends ContractCoverageCheck {
}
