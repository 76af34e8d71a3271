package dev.kanuki.jdbc;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-jdbc registers has a contract test. */
class JdbcCoverageTest extends ContractCoverageCheck {
}
