package dev.kanuki.memcached;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-memcached registers has a contract test. */
class MemcachedCoverageTest extends ContractCoverageCheck {
}
