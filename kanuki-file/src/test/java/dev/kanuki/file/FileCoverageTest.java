package dev.kanuki.file;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend kanuki-file registers has a contract test. */
class FileCoverageTest extends ContractCoverageCheck {
}
