package dev.kanuki.sqlite;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-sqlite registers has a contract test. */
class SqliteCoverageTest extends ContractCoverageCheck {
}
