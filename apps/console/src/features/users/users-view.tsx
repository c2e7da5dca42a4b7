"use client";

import { useQuery } from "@tanstack/react-query";
import { useAdminReason } from "~/components/admin-only";
import { ErrorNotice } from "~/components/error-notice";
import { useMe } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { CreateUserForm } from "./create-user-form";
import { UserRow } from "./user-row";
import styles from "./users.module.css";
import { TableScroll } from "~/components/table-scroll";

/** Console users (admin only; the API enforces it too). */
export function UsersView() {
  const trpc = useTRPC();
  const reason = useAdminReason();
  const me = useMe();
  const users = useQuery({ ...trpc.users.list.queryOptions(), enabled: reason === null });

  if (reason) {
    return (
      <div className={`panel ${styles.notice}`} data-testid="users-forbidden">
        Managing users: {reason} Ask an admin.
      </div>
    );
  }
  return (
    <div className={styles.page}>
      <h1>Users</h1>
      <CreateUserForm />
      <section className="panel" aria-labelledby="users-heading">
        <header>
          <h2 id="users-heading">Users</h2>
          <span className="muted">{users.data?.length ?? ""}</span>
        </header>
        {users.error ? (
          <ErrorNotice error={users.error} />
        ) : users.data ? (
          <TableScroll label="Users">
            <table className="data" data-testid="users-table">
              <thead>
                <tr>
                  <th>Email</th>
                  <th>Name</th>
                  <th>Role</th>
                  <th>Status</th>
                  <th>Change</th>
                </tr>
              </thead>
              <tbody>
                {users.data.map((u) => (
                  <UserRow key={u.id} user={u} isMe={u.id === me.id} />
                ))}
              </tbody>
            </table>
          </TableScroll>
        ) : (
          <p className="body muted">Loading…</p>
        )}
      </section>
    </div>
  );
}
