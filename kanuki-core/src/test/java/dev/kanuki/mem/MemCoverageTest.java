package dev.kanuki.mem;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-core registers has a contract test. */
class MemCoverageTest extends ContractCoverageCheck {
}
