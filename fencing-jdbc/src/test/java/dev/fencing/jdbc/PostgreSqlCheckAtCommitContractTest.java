package dev.fencing.jdbc;

import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import java.util.List;

/**
 * The JDBC store contract on PostgreSQL with {@code checkAtCommit(true)}: every rule, rollback, joining, restart and
 * ordering test of the default mode, the check now sent with COMMIT. The generic contract records its writes in a
 * list; in this mode the body runs before the verdict, so its writes here are recorded when the transaction commits
 * (as a database write would land), and the one generic test whose body appends to a list directly, outside any
 * transaction, does not apply (the database version of it, committedOrderIsTokenOrderUnderConcurrency, runs).
 */
@ExtendWith(PostgreSqlCheckAtCommitContractTest.NotForBodyEffects.class)
class PostgreSqlCheckAtCommitContractTest extends JdbcFenceStoreContract {

    @Override
    Database database() {
        return Database.POSTGRESQL;
    }

    @Override
    JdbcFenceStore.Builder configure(JdbcFenceStore.Builder builder) {
        return builder.checkAtCommit(true);
    }

    @Override
    protected String write(String resource, FencingToken token, List<String> log, String label) throws Throwable {
        return store().fence(resource, token, () -> {
            TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
                @Override
                public void afterCommit() {
                    log.add(label);
                }
            });
            return label;
        });
    }

    /** Skips the generic test whose body writes outside the database (the mode does not fence such effects). */
    static final class NotForBodyEffects implements ExecutionCondition {
        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return context.getTestMethod().filter(m -> m.getName().equals("appliedOrderIsTokenOrderUnderConcurrency"))
                    .map(m -> ConditionEvaluationResult.disabled("effects outside the database are not fenced at "
                            + "commit (docs/stores.md); committedOrderIsTokenOrderUnderConcurrency is its database "
                            + "version"))
                    .orElse(ConditionEvaluationResult.enabled("runs in check-at-commit mode"));
        }
    }
}
