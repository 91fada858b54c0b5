import { isProblem } from '../api/client';
import { EmptyState } from '../kit/EmptyState';
import { ProblemAlert } from '../kit/ProblemAlert';

/**
 * Why the session could not be read: the store turned its portal off (404), or the request failed.
 * Loaded only when it happens, to keep the portal's first load small.
 */
export default function SessionProblem({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  if (isProblem(error, 404)) {
    return (
      <EmptyState title="This portal is closed">
        The store has turned its customer portal off. For your license keys and downloads, contact the store you bought from.
      </EmptyState>
    );
  }
  return <ProblemAlert error={error} onRetry={onRetry} />;
}
