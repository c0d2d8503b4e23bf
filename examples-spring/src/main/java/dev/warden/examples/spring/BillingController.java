package dev.warden.examples.spring;

import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.spring.LockTimeoutException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import java.util.Map;

/** The service over HTTP: open a merchant, charge an order, read the balance, settle the month. */
@RestController
public class BillingController {

    private final BillingService billing;

    public BillingController(BillingService billing) {
        this.billing = billing;
    }

    @PostMapping("/merchants/{id}")
    public Map<String, String> open(@PathVariable String id, @RequestParam long quota) {
        Outcome outcome = billing.open(id, quota);
        return Map.of("merchant", id, "outcome", outcome.status().name());
    }

    @PostMapping("/merchants/{id}/charges/{orderId}")
    public Receipt charge(@PathVariable String id, @PathVariable String orderId,
                          @RequestParam(defaultValue = "1") int percent) {
        return billing.charge(id, orderId, percent);
    }

    @GetMapping("/merchants/{id}/balance")
    public ResponseEntity<Map<String, Object>> balance(@PathVariable String id) {
        return billing.balance(id).isPresent()
                ? ResponseEntity.ok(Map.of("merchant", id, "balance", billing.balance(id).getAsLong()))
                : ResponseEntity.notFound().build();
    }

    @PostMapping("/merchants/{id}/settlement")
    public Settlement settle(@PathVariable String id) {
        return billing.settle(id);
    }

    /** The merchant's lock stayed busy past the wait: ask the caller to retry. */
    @ExceptionHandler(LockTimeoutException.class)
    public ResponseEntity<Map<String, String>> busy(LockTimeoutException e) {
        return ResponseEntity.status(HttpStatus.CONFLICT).body(Map.of("error", e.getMessage()));
    }

    /** Redis is unreachable, or lost its data (a partition without its marker): not the caller's fault. */
    @ExceptionHandler(QuotaException.class)
    public ResponseEntity<Map<String, String>> unavailable(QuotaException e) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("error", e.reason().name()));
    }

    @ExceptionHandler(BillingService.UnknownMerchantException.class)
    public ResponseEntity<Map<String, String>> unknown(BillingService.UnknownMerchantException e) {
        return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", e.getMessage()));
    }
}
