package dev.fencing.amqp.internal;

import dev.fencing.amqp.FencingTokenListenerAdvice;
import dev.fencing.store.FenceStore;
import org.aopalliance.aop.Advice;
import org.springframework.amqp.core.MessageListener;
import org.springframework.amqp.rabbit.config.AbstractRabbitListenerContainerFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.MessageListenerContainer;
import org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry;
import org.springframework.amqp.rabbit.listener.adapter.AbstractAdaptableMessageListener;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Not an API: what fencing's startup checks read of Spring AMQP listener containers, shared by {@code @EnableFencing}'s
 * check ({@link ListenerAdviceStartupCheck}, with or without Spring Boot) and the starter's. A container with no
 * {@link FencingTokenListenerAdvice} in its advice chain ignores the {@code Fencing-Token} header: a
 * {@code @Fenced(acquire = true)} method its listener reaches takes a lock of its own and writes a sender's (perhaps a
 * zombie's) message. A container whose listener does not fit its advice (asynchronous listeners) is named too.
 */
public final class ListenerAdvices {

    private static final Method CONTAINER_CHAIN =
            ReflectionUtils.findMethod(AbstractMessageListenerContainer.class, "getAdviceChain");

    private static final Method TRANSACTION_MANAGER =
            ReflectionUtils.findMethod(AbstractMessageListenerContainer.class, "getTransactionManager");

    private static final Method DEFAULT_REQUEUE_REJECTED =
            ReflectionUtils.findMethod(AbstractAdaptableMessageListener.class, "isDefaultRequeueRejected");

    static {
        if (CONTAINER_CHAIN != null) {
            ReflectionUtils.makeAccessible(CONTAINER_CHAIN);
        }
        if (DEFAULT_REQUEUE_REJECTED != null) {
            ReflectionUtils.makeAccessible(DEFAULT_REQUEUE_REJECTED);
        }
        if (TRANSACTION_MANAGER != null) {
            ReflectionUtils.makeAccessible(TRANSACTION_MANAGER);
        }
    }

    private ListenerAdvices() {
    }

    /** The container's advice chain; {@code null} when this Spring AMQP has no such method (nothing to tell). */
    public static Advice[] chain(AbstractMessageListenerContainer container) {
        if (CONTAINER_CHAIN == null) {
            return null;
        }
        Advice[] chain = (Advice[]) ReflectionUtils.invokeMethod(CONTAINER_CHAIN, container);
        return chain == null ? new Advice[0] : chain;
    }

    /** Whether {@code chain} holds a {@link FencingTokenListenerAdvice}. */
    public static boolean fenced(Advice[] chain) {
        return chain != null && Arrays.stream(chain).anyMatch(FencingTokenListenerAdvice.class::isInstance);
    }

    /**
     * Whether a {@link FencingTokenListenerAdvice} in {@code chain} comes after Spring AMQP's stateless retry
     * ({@code StatelessRetryOperationsInterceptor}, what {@code RetryInterceptorBuilder.stateless()} and Boot's
     * listener retry build; compared by name, so that a Spring AMQP without it links). That retry runs each further
     * attempt with {@code proceed()} on the invocation the first attempt went through, which goes straight to the
     * listener, past every advice behind the retry: a retried
     * listener runs without the message's tokens (an acquiring method then writes under a lock of its own), and a
     * message the advice rejected before its listener ran (an untrusted sender, a malformed header, a batch of
     * mixed tokens) reaches its listener on the next attempt, its header unread.
     */
    public static boolean behindStatelessRetry(Advice[] chain) {
        if (chain == null) {
            return false;
        }
        boolean retry = false;
        for (Advice advice : chain) {
            if (advice != null && STATELESS_RETRY.equals(advice.getClass().getName())) {
                retry = true;
            } else if (retry && advice instanceof FencingTokenListenerAdvice) {
                return true;
            }
        }
        return false;
    }

    /** Spring AMQP 4's stateless retry advice (a final class). */
    private static final String STATELESS_RETRY =
            "org.springframework.amqp.rabbit.config.StatelessRetryOperationsInterceptor";

    /** What {@link #behindStatelessRetry} finds wrong, as a misfit or startup problem says it. */
    static final String BEHIND_RETRY = "its FencingTokenListenerAdvice comes after a stateless retry "
            + "(StatelessRetryOperationsInterceptor) in its advice chain: Spring AMQP runs each retried attempt "
            + "past the advices behind the retry, so a retried listener runs without the message's tokens (an "
            + "acquiring method takes a lock of its own and writes) and a message the advice rejected (an untrusted "
            + "sender, a malformed header) reaches its listener on the retry. Put the FencingTokenListenerAdvice "
            + "first: setAdviceChain(advice, retry)";

    /**
     * The factory beans and containers whose chain puts a {@link FencingTokenListenerAdvice} behind a stateless
     * retry ({@link #behindStatelessRetry}), or {@code null} when there are none.
     */
    public static String retryProblem(ListableBeanFactory beans,
                                      Map<String, AbstractMessageListenerContainer> containers) {
        List<String> behind = new ArrayList<>();
        beans.getBeansOfType(AbstractRabbitListenerContainerFactory.class, false, false).forEach((name, factory) -> {
            if (behindStatelessRetry(factory.getAdviceChain())) {
                behind.add("listener container factory " + name);
            }
        });
        containers.forEach((name, container) -> {
            if (behindStatelessRetry(chain(container))) {
                behind.add("listener container " + described(name, container));
            }
        });
        return behind.isEmpty() ? null : "In " + String.join(", ", behind) + ", " + BEHIND_RETRY
                + ". See docs/propagation.md, \"Another process over RabbitMQ\" (retries)";
    }

    /** Spring AMQP's own transaction manager: its commit is the channel's, no fence store's. */
    private static final String RABBIT_TRANSACTIONS =
            "org.springframework.amqp.rabbit.transaction.RabbitTransactionManager";

    /**
     * The containers of {@code containers} with a {@link FencingTokenListenerAdvice} that run each delivery in a
     * transaction of their own ({@code setTransactionManager}, other than a {@code RabbitTransactionManager}) while a
     * fence store of the context judges tokens at commit ({@link FenceStore#judgesAtCommit()}, a
     * {@code JdbcFenceStore} with {@code checkAtCommit(true)}), or {@code null} when there are none. The container
     * commits after the advice returned, so such a store refuses outside it, and Spring AMQP rolls the delivery back
     * with requeue whatever its requeue settings say: the refused message is redelivered at once, for ever.
     */
    public static String commitProblem(ListableBeanFactory beans,
                                       Map<String, AbstractMessageListenerContainer> containers) {
        if (TRANSACTION_MANAGER == null || beans.getBeansOfType(FenceStore.class, false, false).values().stream()
                .noneMatch(FenceStore::judgesAtCommit)) {
            return null;
        }
        List<String> committing = new ArrayList<>();
        containers.forEach((name, container) -> {
            Object manager = ReflectionUtils.invokeMethod(TRANSACTION_MANAGER, container);
            if (manager != null && !RABBIT_TRANSACTIONS.equals(manager.getClass().getName())
                    && fenced(chain(container))) {
                committing.add(described(name, container) + " (" + manager.getClass().getName() + ")");
            }
        });
        return committing.isEmpty() ? null : "Listener containers " + committing + " run each delivery in a "
                + "transaction they commit after their FencingTokenListenerAdvice returned, and a fence store of this "
                + "application judges tokens at commit (JdbcFenceStore checkAtCommit): a refusal there comes from the "
                + "container's commit, outside the advice, and Spring AMQP requeues that rollback whatever its "
                + "requeue settings say, so the refused message is redelivered at once, for ever. Start the "
                + "transaction inside the listener (@Transactional on the listener method or the service it calls) "
                + "instead of container.setTransactionManager(..), or check before the method body. See "
                + "docs/propagation.md, \"Another process over RabbitMQ\" (a transaction the container runs)";
    }

    /**
     * The context's listener containers by name: the {@code @RabbitListener} registries' containers built by now, by
     * listener id, then container beans by bean name.
     */
    public static Map<String, AbstractMessageListenerContainer> containers(ListableBeanFactory beans) {
        Map<String, AbstractMessageListenerContainer> containers = new LinkedHashMap<>();
        beans.getBeanProvider(RabbitListenerEndpointRegistry.class).orderedStream().forEach(registry -> {
            for (String id : registry.getListenerContainerIds()) {
                MessageListenerContainer container = registry.getListenerContainer(id);
                if (container instanceof AbstractMessageListenerContainer listening) {
                    containers.put(id, listening);
                }
            }
        });
        beans.getBeansOfType(AbstractMessageListenerContainer.class, false, false).forEach(containers::putIfAbsent);
        return containers;
    }

    /** The listener container factory beans with no {@link FencingTokenListenerAdvice} in their advice chain. */
    public static List<String> unfencedFactories(ListableBeanFactory beans) {
        List<String> unfenced = new ArrayList<>();
        beans.getBeansOfType(AbstractRabbitListenerContainerFactory.class, false, false).forEach((name, factory) -> {
            if (!fenced(factory.getAdviceChain())) {
                unfenced.add(name);
            }
        });
        return unfenced;
    }

    /** The containers of {@code containers} whose chain has no {@link FencingTokenListenerAdvice}, described. */
    public static List<String> ignoring(Map<String, AbstractMessageListenerContainer> containers) {
        List<String> ignoring = new ArrayList<>();
        containers.forEach((name, container) -> {
            Advice[] chain = chain(container);
            if (chain != null && !fenced(chain)) {
                ignoring.add(described(name, container));
            }
        });
        return ignoring;
    }

    /**
     * What ignores the header, or {@code null}: the unfenced factory beans and containers, with {@code fix}.
     *
     * @param factories the factory beans without the advice
     * @param containers the containers without it, {@link #described described}
     * @param fix how the advice gets there in this kind of application
     */
    public static String ignoringProblem(List<String> factories, List<String> containers, String fix) {
        if (factories.isEmpty() && containers.isEmpty()) {
            return null;
        }
        List<String> what = new ArrayList<>(2);
        if (!factories.isEmpty()) {
            what.add("listener container factories " + factories);
        }
        if (!containers.isEmpty()) {
            what.add("listener containers " + containers);
        }
        String named = String.join(" and ", what);
        return Character.toUpperCase(named.charAt(0)) + named.substring(1) + " have no FencingTokenListenerAdvice, "
                + "so they would ignore the Fencing-Token header of their messages (a factory, in every container it "
                + "builds): a fenced write their listeners reach is refused as missing, but a @Fenced(acquire = true) "
                + "method takes a lock of its own and writes, the "
                + "sender's token (perhaps a zombie's) set aside unseen. " + fix;
    }

    /**
     * What does not fit between a container's listener and the application's advice in its chain (those but
     * {@code added}, the starter's), or {@code null}: an asynchronous listener (a {@code CompletableFuture}, a
     * {@code Mono}, a Kotlin suspend function) is acknowledged or rejected when its result completes, outside the
     * advice, so a fence refusal there is requeued unless the listener adapter rejects without requeue by default, and
     * the advice must not report its tokens at return; a synchronous listener under
     * {@link FencingTokenListenerAdvice#forAsyncListeners()} would have its unchecked tokens go unreported.
     */
    public static String misfits(AbstractMessageListenerContainer container, Advice[] chain, Advice added) {
        List<FencingTokenListenerAdvice> own = Arrays.stream(chain)
                .filter(advice -> advice instanceof FencingTokenListenerAdvice && advice != added)
                .map(FencingTokenListenerAdvice.class::cast).toList();
        Object listener = container.getMessageListener();
        boolean async = listener instanceof MessageListener messageListener && messageListener.isAsyncReplies();
        List<String> misfits = new ArrayList<>(3);
        if (behindStatelessRetry(chain)) {
            misfits.add(BEHIND_RETRY);
        }
        if (async) {
            if (requeues(listener)) {
                misfits.add("its asynchronous listener's failed results are requeued by default, a fence refusal "
                        + "among them, redelivered for ever: give its factory setDefaultRequeueRejected(false) "
                        + "(spring.rabbitmq.listener.simple.default-requeue-rejected=false, or .direct., with Boot's "
                        + "factory), which reaches the listener adapter that rejects the result");
            }
            if (own.stream().anyMatch(advice -> !advice.isForAsyncListeners())) {
                misfits.add("its asynchronous listener returns before its fenced work is done, so its "
                        + "FencingTokenListenerAdvice would report every message as unchecked: use "
                        + "new FencingTokenListenerAdvice(..).forAsyncListeners() for this container's factory");
            }
        } else if (own.stream().anyMatch(FencingTokenListenerAdvice::isForAsyncListeners)) {
            misfits.add("its listener is synchronous but its advice is FencingTokenListenerAdvice.forAsyncListeners(), "
                    + "which never reports a token the listener left unchecked: give it a factory with "
                    + "new FencingTokenListenerAdvice(..) without forAsyncListeners()");
        }
        return misfits.isEmpty() ? null : String.join("; ", misfits);
    }

    /**
     * The containers of {@code containers} with the application's advice that do not fit it ({@link #misfits}),
     * described with what does not fit; {@code added} is the starter's advice, {@code null} without it.
     */
    public static List<String> misfitting(Map<String, AbstractMessageListenerContainer> containers, Advice added) {
        List<String> misfit = new ArrayList<>();
        containers.forEach((name, container) -> {
            Advice[] chain = chain(container);
            if (fenced(chain)) {
                String misfits = misfits(container, chain, added);
                if (misfits != null) {
                    misfit.add(described(name, container) + ": " + misfits);
                }
            }
        });
        return misfit;
    }

    /** The problem naming {@code misfit} ({@link #misfitting}), or {@code null}. */
    public static String misfitProblem(List<String> misfit) {
        return misfit.isEmpty() ? null : "Listener containers do not fit their FencingTokenListenerAdvice: "
                + String.join("; and ", misfit) + ". See docs/propagation.md, \"Another process over RabbitMQ\" "
                + "(asynchronous listeners, retries)";
    }

    /**
     * Whether an asynchronous listener's failed result is requeued unless an {@code AmqpRejectAndDontRequeueException}
     * is in its cause chain (Spring AMQP's default); {@code true} for a listener this cannot tell: fail closed.
     */
    private static boolean requeues(Object listener) {
        if (listener instanceof AbstractAdaptableMessageListener adaptable && DEFAULT_REQUEUE_REJECTED != null) {
            return !Boolean.FALSE.equals(ReflectionUtils.invokeMethod(DEFAULT_REQUEUE_REJECTED, adaptable));
        }
        return true;
    }

    /** A container's name with its queues, which a generated listener id does not tell. */
    public static String described(String name, AbstractMessageListenerContainer container) {
        String[] queues = container.getQueueNames();
        return queues.length == 0 ? name : name + " (queues " + String.join(", ", queues) + ")";
    }
}
