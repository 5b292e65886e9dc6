package dev.fencing.spring.support;

import org.springframework.aop.Advisor;
import org.springframework.aop.framework.Advised;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.interceptor.TransactionAspectSupport;
import org.springframework.transaction.interceptor.TransactionAttribute;
import org.springframework.transaction.interceptor.TransactionAttributeSource;

import java.lang.reflect.Method;

/**
 * Finds a transaction interceptor that runs inside the fence on a proxy and begins a transaction apart from the
 * fence's, or suspends it, for a fenced method: Spring Data puts its repository's own transaction interceptor in the
 * repository proxy, behind the fence advisor (Spring's {@code @Transactional} advisor does not advise repository
 * proxies). Loaded only when spring-tx is on the class path.
 */
final class InnerTransactions {

    /** Spring's {@code @Transactional} advisor: the startup check of the advisors' order judges it. */
    private static final String STANDARD_ADVISOR =
            "org.springframework.transaction.interceptor.BeanFactoryTransactionAttributeSourceAdvisor";

    /** How many proxies deep the search goes (a proxy of a proxy of ...). */
    private static final int MAX_DEPTH = 4;

    private InnerTransactions() {
    }

    /**
     * The propagation ({@code REQUIRES_NEW}, {@code NOT_SUPPORTED}, {@code NEVER}) with which a transaction
     * interceptor after the checking fence advisor in {@code proxy}'s chain would run {@code method}, or {@code null}
     * when none would begin or suspend a transaction there.
     */
    static String apartFromTheFence(Object proxy, Method method, Class<?> userClass) {
        boolean afterFence = false;
        Object current = proxy;
        // the fence's proxy may wrap the repository's (a proxy of its own around it) or be the same one
        for (int depth = 0; depth < MAX_DEPTH && current instanceof Advised advised; depth++) {
            for (Advisor advisor : advised.getAdvisors()) {
                if (advisor instanceof FencingAdvisor fencing && !fencing.acquiring()) {
                    afterFence = true;
                } else if (afterFence && advisor.getAdvice() instanceof TransactionAspectSupport transactions
                        && !advisor.getClass().getName().equals(STANDARD_ADVISOR)) {
                    String propagation = propagationApart(transactions, method, targetClass(advised, userClass));
                    if (propagation != null) {
                        return propagation;
                    }
                }
            }
            current = staticTarget(advised);
        }
        return null;
    }

    /** The object a proxy calls, when it is always the same one; else {@code null}. */
    private static Object staticTarget(Advised advised) {
        try {
            return advised.getTargetSource().isStatic() ? advised.getTargetSource().getTarget() : null;
        } catch (Exception unknown) {
            return null;
        }
    }

    private static Class<?> targetClass(Advised advised, Class<?> userClass) {
        Class<?> target = advised.getTargetSource().getTargetClass();
        return target != null ? target : userClass;
    }

    private static String propagationApart(TransactionAspectSupport transactions, Method method, Class<?> target) {
        TransactionAttributeSource source = transactions.getTransactionAttributeSource();
        TransactionAttribute attribute = source == null ? null : source.getTransactionAttribute(method, target);
        if (attribute == null) {
            return null;
        }
        return switch (attribute.getPropagationBehavior()) {
            case TransactionDefinition.PROPAGATION_REQUIRES_NEW -> "REQUIRES_NEW";
            case TransactionDefinition.PROPAGATION_NOT_SUPPORTED -> "NOT_SUPPORTED";
            case TransactionDefinition.PROPAGATION_NEVER -> "NEVER";
            default -> null;
        };
    }
}
