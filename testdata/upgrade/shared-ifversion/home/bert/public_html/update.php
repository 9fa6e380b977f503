<?php /* update.php */ ?>
