// Test workers drop the same grpc-js warning the CLI drops (see src/util/warnings.ts).
import { dropServernameWarning } from '../../src/util/warnings.js';

dropServernameWarning();
