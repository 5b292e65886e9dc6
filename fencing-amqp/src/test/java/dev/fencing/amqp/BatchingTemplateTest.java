package dev.fencing.amqp;

import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.amqp.rabbit.batch.SimpleBatchingStrategy;
import org.springframework.amqp.rabbit.core.BatchingRabbitTemplate;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A {@code BatchingRabbitTemplate} runs its before-publish post-processors once per batch, on the thread whose send
 * releases it: a review had the newer holder's message sent with the zombie's token that released the batch, and the
 * zombie's stale write accepted by the consumer. The post-processor refuses a batch: the releasing send fails and
 * nothing reaches the queue; a plain template beside it still sends.
 */
@Timeout(60)
class BatchingTemplateTest {

    @Test
    void aBatchIsRefusedAndNothingIsSent() throws Exception {
        try (TestBroker broker = new TestBroker()) {
            String queue = broker.queue("batched");
            ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();
            scheduler.initialize();
            try {
                BatchingRabbitTemplate template = new BatchingRabbitTemplate(broker.connectionFactory,
                        new SimpleBatchingStrategy(2, 65_536, 30_000), scheduler);
                template.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
                FencingToken current = new FencingToken("accounts:1", 6, "holder-new");
                FencingToken zombie = new FencingToken("accounts:1", 5, "holder-old");
                // the newer holder's send joins the batch; the zombie's, on another thread, releases it
                CompletableFuture.runAsync(() -> {
                    try (FencingScope ignored = FencingContext.bind(current)) {
                        template.convertAndSend("", queue, "write:1:new");
                    }
                }).get(10, TimeUnit.SECONDS);
                try (FencingScope ignored = FencingContext.bind(zombie)) {
                    assertThatThrownBy(() -> template.convertAndSend("", queue, "write:1:zombie"))
                            .hasStackTraceContaining("the message is a batch of messages")
                            .hasStackTraceContaining("BatchingRabbitTemplate")
                            .rootCause().isInstanceOf(IllegalStateException.class);
                }
                Thread.sleep(300);
                assertThat(broker.depth(queue)).as("messages in the queue").isZero();

                RabbitTemplate plain = new RabbitTemplate(broker.connectionFactory);
                plain.setBeforePublishPostProcessors(new FencingTokenMessagePostProcessor());
                try (FencingScope ignored = FencingContext.bind(current)) {
                    plain.convertAndSend("", queue, "write:1:new");
                }
                org.springframework.amqp.core.Message received = plain.receive(queue, 5_000);
                assertThat(received).isNotNull();
                assertThat((String) received.getMessageProperties().getHeader(FencingTokenMessagePostProcessor.HEADER))
                        .isEqualTo(current.toText());
            } finally {
                scheduler.shutdown();
            }
        }
    }
}
