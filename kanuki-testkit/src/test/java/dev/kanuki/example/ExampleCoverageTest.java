package dev.kanuki.example;

import dev.kanuki.contract.ContractCoverageCheck;

/** Every backend registered beside these tests (the example) has a contract test. */
class ExampleCoverageTest extends ContractCoverageCheck {
}
