import { ContractChecker, type Exchange, type Verdict } from './contract-checker';
import { API_NAMES, readContractDocument } from './contract-document';
import { contractFile, DEVIATIONS_FILE } from './contract-files';
import { readDeviations } from './deviations';

let checker: ContractChecker | undefined;

/** The checker for the e2e suite: both contracts and deviations.yaml, loaded once per test file. */
export function suiteContractChecker(): ContractChecker {
  checker ??= new ContractChecker(
    API_NAMES.map((api) => readContractDocument(api, contractFile(api))),
    readDeviations(DEVIATIONS_FILE),
  );
  return checker;
}

/** The message of a failed check: the request, the status, what it was checked as, each violation. */
export function describeViolations(exchange: Exchange, verdict: Verdict): string {
  return [
    `contract violation: ${exchange.method.toUpperCase()} ${exchange.target} answered ${exchange.status}`,
    `  checked as ${verdict.subject}`,
    ...verdict.violations.map((violation) => `  - ${violation}`),
    `  body: ${exchange.text.slice(0, 500)}`,
  ].join('\n');
}

/** Stack frames of the harness itself, dropped so that the failure points at the test's call. */
const HARNESS_FRAME = /^\s+at .*[/\\]support[/\\](contract[/\\]|api-client\.)/;

/** Throws when the response breaks the contract in a way no deviation excuses. */
export function assertConformsToContract(
  exchange: Exchange,
  contractChecker: ContractChecker = suiteContractChecker(),
): void {
  const verdict = contractChecker.check(exchange);
  if (verdict.violations.length === 0) return;
  const error = new Error(describeViolations(exchange, verdict));
  error.stack = error.stack
    ?.split('\n')
    .filter((line) => !HARNESS_FRAME.test(line))
    .join('\n');
  throw error;
}
