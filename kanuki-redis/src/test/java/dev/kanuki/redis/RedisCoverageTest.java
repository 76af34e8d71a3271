package dev.kanuki.redis;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-redis registers has a contract test. */
class RedisCoverageTest extends ContractCoverageCheck {
}
