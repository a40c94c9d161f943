// SPEC §15 introspection quality: how much of each program's manual its help parser finds. The expected lists
// (test/fixtures/expected/*.json) were written from the manual pages, not from parser output; each
// row counts subcommands found, options found (by long or short name) and options found with the
// type the manual gives. The measured row is annotated on the test and asserted against a floor.
import { GNU_GIT_CLAP_CASES } from '../../support/quality-cases.js';
import { qualityTests } from './quality.js';

qualityTests('GNU, git, clap families', GNU_GIT_CLAP_CASES);
