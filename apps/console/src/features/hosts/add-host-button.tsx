"use client";

import { useState } from "react";
import { AdminOnly } from "~/components/admin-only";
import { ModalDialog } from "~/components/modal-dialog";
import { AddHostForm } from "./add-host-form";
import styles from "./hosts-admin.module.css";

/** "Add host" for the Hosts panel (admins; others see why not): a dialog that makes an enrollment token. */
export function AddHostButton() {
  const [open, setOpen] = useState(false);
  return (
    <span className={styles.headerAction}>
      <AdminOnly label="Add host" testId="add-host">
        <button type="button" onClick={() => setOpen(true)} data-testid="add-host">
          Add host
        </button>
      </AdminOnly>
      {open && (
        <ModalDialog title="Add a host" onClose={() => setOpen(false)} testId="add-host-dialog">
          <AddHostForm onDone={() => setOpen(false)} />
        </ModalDialog>
      )}
    </span>
  );
}
